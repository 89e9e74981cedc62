"""The graph retrieval path (docs/graph-path.md): a term/entity graph of each chunking,
built without an LLM (nodes.py: node extractors; pmi.py: NPMI edges; build.py: the
graph), searched by spreading from the question's nodes (spread.py: Personalized PageRank
and other rules; search.py: linking and scoring); path.py registers it in PATHS."""
