"""The retrieval stack: BM25 and dense paths, fusion, composite rerank (issue 4).

Stage-level API for the flow lives in ablate.components.retrieval.stages; registries:
analyzer.ANALYZERS, stages.PATHS, fusion.FUSERS, rerank.SIGNALS, stages.RERANKERS.
"""
