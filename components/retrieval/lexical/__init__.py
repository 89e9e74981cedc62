"""The lexical retrieval family: the `bm25` path (path.py), its index (bm25*.py: Okapi
and variants, collection statistics, the compiled search, the on-disk form), the
analyzers that make its terms (analyzer*.py, porter_lucene.py; also read by the graph
path and the `lexical` rerank signal), its memoised indexes (resources.py) and how it
shards (sharding.py: a statistics merge)."""
