"""The dense retrieval family: the `dense` path (path.py), the encoder (encoder.py: the
embedding cache embed_cache.py, word-piece counts span_pieces.py, the runtimes
backends.py: torch bert_torch.py, ONNX onnx_encoder.py and onnx_export.py), the dense
indexes (ann.py: exact flat and FAISS), the run's encoders (resources.py) and how it
shards (sharding.py: an exact top-k merge)."""
