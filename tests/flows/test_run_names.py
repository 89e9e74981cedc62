"""Short, distinct MLflow run names (truncated long names made variants indistinguishable)."""

from ablate.flows.track.run_names import run_names


def _v(name, variable=None, value=None):
    return {"name": name, "variable": variable, "value": value}


def test_demo_variants_get_short_distinct_names():
    names = run_names([
        _v("baseline"), _v("fusion.rrf_k=200", "fusion.rrf_k", 200),
        _v("generator.name=smollm2", "generator.name", "smollm2"),
        _v("generator.name=closed_book", "generator.name", "closed_book"),
        _v("retrieval.paths=bm25", "retrieval.paths", ["bm25"]),
        _v("chunking.size=100", "chunking.size", 100),
        _v("rerank.weights=a", "rerank.weights", {"semantic": 0.6, "fusion": 0.3, "source": 0.1}),
        _v("rerank.weights=b", "rerank.weights", {"semantic": 1.0})])
    assert names == {"baseline": "baseline", "fusion.rrf_k=200": "rrf_k=200",
                     "generator.name=smollm2": "gen=smollm2",
                     "generator.name=closed_book": "gen=closed_book",
                     "retrieval.paths=bm25": "paths=bm25", "chunking.size=100": "chunk=100",
                     "rerank.weights=a": "rerank=fus0.3,sem0.6,sou0.1",
                     "rerank.weights=b": "rerank=sem1"}
    assert max(map(len, names.values())) <= 28


def test_clashing_short_names_fall_back_to_the_full_variable_then_the_variant():
    names = run_names([_v("baseline"), _v("a", "retrieval.bm25.k1", 1.2),
                       _v("b", "options.mine.k1", 1.2),
                       _v("c", "options.x.flag", "y z"), _v("d", "options.x.flag", "y+z")])
    assert names["a"] == "retrieval.bm25.k1=1.2" and names["b"] == "options.mine.k1=1.2"
    assert len(set(names.values())) == 5


def test_variants_setting_several_fields_name_each_change():
    both = {"chunking.size": 100, "rerank.weights": {"semantic": 1.0}}
    names = run_names([_v("baseline"), _v("chunking.size=100", "chunking.size", 100),
                       _v("chunking.size=100 × rerank.weights=semantic:1",
                          "chunking.size+rerank.weights", both)])
    assert names["chunking.size=100 × rerank.weights=semantic:1"] == "chunk=100 × rerank=sem1"
