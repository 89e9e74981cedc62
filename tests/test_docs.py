"""The documentation: the experiment-file reference is generated from the models and
registries and must be current; every field has a docstring; links between the pages
resolve; no docstring points to a document users do not have."""

from __future__ import annotations

import importlib.util
import re

import pytest
from pydantic import BaseModel, ConfigDict

from tests.conftest import ROOT


def _gen():
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_experiment_file_reference_is_current():
    gen = _gen()
    assert gen.TARGET.read_text(encoding="utf-8") == gen.render(), (
        "docs/experiment-file.md is stale: run python scripts/gen_docs.py")


def test_reference_lists_every_field_default_and_component_name():
    text = (ROOT / "docs" / "experiment-file.md").read_text(encoding="utf-8")
    from ablate.components.contract.config import PipelineConfig
    from ablate.components.contract.dotted import flatten
    for dotted in flatten(PipelineConfig()):
        top = ".".join(dotted.split(".")[:2])
        assert f"`baseline.{top}" in text, dotted
    for field in ("questions.ids_file", "questions.answerable_only", "questions.max",
                  "split_share", "metrics.key", "stats.correction"):
        assert f"`{field}`" in text
    from ablate.components.contract.registry import registry
    for name in registry("generator").names():
        assert f"`{name}`" in text


def test_reference_does_not_depend_on_loaded_plugins():
    """A plugin registered in this process (as the plugin tests do) is not built in."""
    from ablate.components.contract.plugins import load_plugins
    load_plugins(["./tfidf_path.py"], ROOT / "examples" / "plugins")
    from ablate.components.contract.registry import registry
    assert "tfidf" in registry("retrieval path")
    assert "`tfidf`" not in _gen().render()


def test_a_field_without_docstring_fails_generation():
    gen = _gen()

    class Bare(BaseModel):
        model_config = ConfigDict(use_attribute_docstrings=True)
        documented: int = 1
        """It has one."""
        silent: int = 2

    with pytest.raises(gen.MissingDescription, match="'silent'"):
        gen._section("", Bare, None, {})


LINK = re.compile(r"\]\(([^)#\s]+)(#[^)]*)?\)")


@pytest.mark.parametrize("page", sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"],
                         ids=lambda p: p.name)
def test_relative_links_resolve(page):
    for target, _ in LINK.findall(page.read_text(encoding="utf-8")):
        if "://" in target:
            continue
        assert (page.parent / target).exists(), f"{page.name}: broken link {target}"


def test_readme_links_every_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name != "README.md":
            assert f"](docs/{page.name})" in readme, page.name


def test_no_docstring_points_to_a_missing_design_document():
    hits = [str(p.relative_to(ROOT)) for folder in ("components", "flows", "scripts", "tests")
            for p in (ROOT / folder).rglob("*.py") if "DESIGN.md" in p.read_text(encoding="utf-8")
            and p.name != "test_docs.py"]
    assert hits == []


CODE = re.compile(r"```.*?```|`[^`]+`", re.S)  # fenced blocks and inline code spans
# `ablate WORD [WORD]` where a command starts: at the start of a span or line, after a
# path (.venv/bin/ablate), a prompt or a shell operator; not `ablate cold: 26.9 s` output
COMMAND = re.compile(r"(?:^|(?<=/)|(?<=\$ )|(?<=&& )|(?<=\$\()|(?<=; ))ablate[ \t]+"
                     r"([a-z][\w-]*)\b(?![:\w-])(?:[ \t]*\n?[ \t]*([a-z][\w-]*)\b)?", re.M)


def _named_commands() -> set[tuple[str, str, str]]:
    """(page, command, the word after it) of every `ablate ...` command line the docs show."""
    out = set()
    for page in sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]:
        for span in CODE.findall(page.read_text(encoding="utf-8")):
            for cmd, sub in COMMAND.findall(span.strip("`").strip()):
                out.add((page.name, cmd, sub))
    return out


def test_every_command_the_docs_name_exists():
    """`ablate server start` was in docs/scale.md, a command that never existed (issue 58.8):
    every `ablate CMD` the docs show is a command, every `ablate GROUP SUB` a sub-command
    of it, and `ablate server ACTION` one of its actions."""
    import typer

    from ablate.components import catalogue
    from ablate.flows.cli.main import build_app
    from ablate.flows.cli.server import ACTIONS
    catalogue.load()
    commands = typer.main.get_command(build_app()).commands
    named = _named_commands()
    assert ("README.md", "server", "status") in named and ("README.md", "cache", "prune") in named
    wrong = []
    for page, cmd, sub in sorted(named):
        group = getattr(commands.get(cmd), "commands", None)
        if cmd not in commands or (group is not None and sub and sub not in group) or (
                cmd == "server" and sub and sub not in ACTIONS):
            wrong.append(f"{page}: ablate {cmd} {sub}".strip())
    assert wrong == []


def test_every_environment_setting_the_code_reads_is_documented():
    """Issue 54: ABLATE_STATE_HOME was nowhere documented as a setting. Every ABLATE_*
    variable the code names is a row of docs/README.md's environment table."""
    names = set()
    for folder in ("components", "flows"):
        for path in (ROOT / folder).rglob("*.py"):
            names |= set(re.findall(r"\bABLATE_[A-Z_]+\b", path.read_text(encoding="utf-8")))
    text = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    table = text.split("## Settings from the environment", 1)[-1]
    rows = set(re.findall(r"^\| `(ABLATE_[A-Z_]+)`", table, re.M))
    assert "ABLATE_STATE_HOME" in names
    assert names <= rows, f"not documented in docs/README.md: {sorted(names - rows)}"


def _slugs(page) -> set[str]:
    """The anchors GitHub gives a page's headings (fenced code left out)."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    out = set()
    for title in re.findall(r"^#{1,6} (.+?)\s*$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", title.lower().replace("`", "")).replace(" ", "-")
        out.add(slug)
    return out


PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_into_a_section_name_a_heading_there(page):
    """Issue 53.6 moved the README's sections into docs/: a link to `page.md#anchor` (or a
    page's own `#anchor`) names a heading the target page has."""
    text = page.read_text(encoding="utf-8")
    wrong = []
    for target, anchor in re.findall(r"\]\(([^)#\s]*)#([^)\s]+)\)", text):
        dest = (page.parent / target) if target else page
        if "://" in target or dest.suffix != ".md" or not dest.exists():
            continue
        if anchor not in _slugs(dest):
            wrong.append(f"{target}#{anchor}")
    assert wrong == [], f"{page.name}: no such heading: {wrong}"


CITED = re.compile(r"README(?:'s|:|,)\s+\"([^\"]+)\"|README's\s+(\w+)\s+section")


def test_sections_the_code_and_docs_cite_in_the_readme_exist():
    """Issue 53.6: error messages, docstrings, YAML comments and docs that cite a README
    section by name (`README: "Judged metrics"`, `the README's judge section`) name one
    the README still has; the sections that moved are cited by their docs/ page."""
    headings = [h.lower() for h in re.findall(r"^#{1,6} (.+?)\s*$",
                                              (ROOT / "README.md").read_text(encoding="utf-8"),
                                              re.M)]
    wrong = []
    for folder in ("components", "flows", "experiments", "docs", "examples", "scripts"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix not in {".py", ".md", ".yaml", ".yml"}:
                continue
            for quoted, word in CITED.findall(path.read_text(encoding="utf-8")):
                name = (quoted or word).lower()
                if not any(h.startswith(name) or f" {name}" in h for h in headings):
                    wrong.append(f"{path.relative_to(ROOT)}: {quoted or word}")
    assert wrong == []
