"""The Porter stemmer as Lucene's `PorterStemFilter` applies it (Martin Porter's reference
implementation, with its two departures from the 1980 paper that Snowball's `porter`
does not make: `-bli` -> `-ble` instead of `-abli` -> `-able`, and `-logi` -> `-log`).

Words of one or two characters are left as they are; only a-z count as vowels (any
other character is a consonant), as in Lucene. Step names follow Lucene's source
(step1..step6, where the paper has 1a/1b/1c..5b).
"""

from __future__ import annotations

# step3's suffixes by the last-but-one letter: (suffix, replacement), tried in order,
# the first that matches decides (replaced only when the stem's measure is > 0)
_STEP3 = {
    "a": (("ational", "ate"), ("tional", "tion")),
    "c": (("enci", "ence"), ("anci", "ance")),
    "e": (("izer", "ize"),),
    "l": (("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous")),
    "o": (("ization", "ize"), ("ation", "ate"), ("ator", "ate")),
    "s": (("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous")),
    "t": (("aliti", "al"), ("iviti", "ive"), ("biliti", "ble")),
    "g": (("logi", "log"),),
}
_STEP4 = {
    "e": (("icate", "ic"), ("ative", ""), ("alize", "al")),
    "i": (("iciti", "ic"),),
    "l": (("ical", "ic"), ("ful", "")),
    "s": (("ness", ""),),
}
# step5's suffixes by the last-but-one letter (removed when the measure is > 1)
_STEP5 = {
    "a": ("al",), "c": ("ance", "ence"), "e": ("er",), "i": ("ic",), "l": ("able", "ible"),
    "n": ("ant", "ement", "ment", "ent"), "o": ("ion", "ou"), "s": ("ism",),
    "t": ("ate", "iti"), "u": ("ous",), "v": ("ive",), "z": ("ize",),
}


class _Word:
    """The stemmer's state: the letters, k (index of the last letter) and j (the end of
    the stem left by the last suffix matched)."""

    def __init__(self, word: str) -> None:
        self.b = list(word)
        self.k = len(word) - 1
        self.j = 0

    def cons(self, i: int) -> bool:
        c = self.b[i]
        if c in "aeiou":
            return False
        if c == "y":
            return True if i == 0 else not self.cons(i - 1)
        return True

    def m(self) -> int:
        """The number of vowel-consonant sequences in b[0..j]."""
        n, i, j = 0, 0, self.j
        while i <= j and self.cons(i):
            i += 1
        if i > j:
            return 0
        i += 1
        while True:
            while i <= j and not self.cons(i):
                i += 1
            if i > j:
                return n
            i += 1
            n += 1
            while i <= j and self.cons(i):
                i += 1
            if i > j:
                return n
            i += 1

    def vowel_in_stem(self) -> bool:
        return any(not self.cons(i) for i in range(self.j + 1))

    def doublec(self, i: int) -> bool:
        return i >= 1 and self.b[i] == self.b[i - 1] and self.cons(i)

    def cvc(self, i: int) -> bool:
        if i < 2 or not self.cons(i) or self.cons(i - 1) or not self.cons(i - 2):
            return False
        return self.b[i] not in "wxy"

    def ends(self, s: str) -> bool:
        o = self.k - len(s) + 1
        if o < 0 or "".join(self.b[o:self.k + 1]) != s:
            return False
        self.j = self.k - len(s)
        return True

    def setto(self, s: str) -> None:
        del self.b[self.j + 1:]
        self.b.extend(s)
        self.k = self.j + len(s)

    def r(self, s: str) -> None:
        if self.m() > 0:
            self.setto(s)

    def step1(self) -> None:
        b = self.b
        if b[self.k] == "s":
            if self.ends("sses"):
                self.k -= 2
            elif self.ends("ies"):
                self.setto("i")
            elif b[self.k - 1] != "s":
                self.k -= 1
        if self.ends("eed"):
            if self.m() > 0:
                self.k -= 1
        elif (self.ends("ed") or self.ends("ing")) and self.vowel_in_stem():
            self.k = self.j
            if self.ends("at"):
                self.setto("ate")
            elif self.ends("bl"):
                self.setto("ble")
            elif self.ends("iz"):
                self.setto("ize")
            elif self.doublec(self.k):
                if self.b[self.k] not in "lsz":
                    self.k -= 1
            elif self.m() == 1 and self.cvc(self.k):
                self.setto("e")

    def step2(self) -> None:
        if self.ends("y") and self.vowel_in_stem():
            self.b[self.k] = "i"

    def _table(self, table: dict[str, tuple[tuple[str, str], ...]], at: int) -> None:
        for suffix, repl in table.get(self.b[at], ()):
            if self.ends(suffix):
                self.r(repl)
                return

    def step5(self) -> None:
        if self.k == 0:
            return
        for suffix in _STEP5.get(self.b[self.k - 1], ()):
            if self.ends(suffix):
                if suffix == "ion" and not (self.j >= 0 and self.b[self.j] in "st"):
                    continue
                break
        else:
            return
        if self.m() > 1:
            self.k = self.j

    def step6(self) -> None:
        self.j = self.k
        if self.b[self.k] == "e":
            a = self.m()
            if a > 1 or (a == 1 and not self.cvc(self.k - 1)):
                self.k -= 1
        if self.b[self.k] == "l" and self.doublec(self.k) and self.m() > 1:
            self.k -= 1

    def stem(self) -> str:
        if self.k > 1:
            self.step1()
            self.step2()
            if self.k != 0:
                self._table(_STEP3, self.k - 1)
            self._table(_STEP4, self.k)
            self.step5()
            self.step6()
        return "".join(self.b[:self.k + 1])


def stem(word: str) -> str:
    """The Porter stem of a lower-cased word, as Lucene's PorterStemmer gives it."""
    return _Word(word).stem()
