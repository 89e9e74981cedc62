from dataclasses import replace

from ablate.components.data import load_dataset
from ablate.components.data.fingerprint import fingerprint


def test_fingerprint_tracks_content_not_order(fixtures):
    ds = load_dataset(fixtures / "native")
    docs, qs = list(ds.documents), list(ds.questions)
    assert fingerprint(docs, qs) == ds.fingerprint
    assert fingerprint(docs[::-1], qs[::-1]) == ds.fingerprint
    changed_text = [replace(docs[0], text=docs[0].text + "!")] + docs[1:]
    assert fingerprint(changed_text, qs) != ds.fingerprint
    span = qs[0].evidence[0][0]
    changed_span = [replace(qs[0], evidence=((replace(span, end=span.end - 1),),))] + qs[1:]
    assert fingerprint(docs, changed_span) != ds.fingerprint
    assert fingerprint(docs, qs[:-1]) != ds.fingerprint
