"""The retrieval stack (issue 4), one room per family under one search contract:
lexical/ (bm25), dense/ (dense), graph/ (graph); each family registers its path in
stages.PATHS and keeps its resources and sharding beside it (docs/extending.md).

The shared contract stays here: stages.py (the stage-level API for the flow, the PATHS and
RERANKERS registries), fusion.py (fusion.FUSERS), rerank.py (rerank.SIGNALS), shards.py
(the shard contract), latency.py (seconds per question, rankings with index costs),
topk.py, indexes.py (per-process memo helpers), resources.py (what stages share) and
array_folder.py (arrays kept on disk). Analyzers: lexical.analyzer.ANALYZERS.
"""
