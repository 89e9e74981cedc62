"""ablate components: the RAG parts and the evaluation science, as plain Python.

Nothing in this package imports prefect or mlflow; flows/ orchestrates these parts.
"""

__version__ = "0.1.0"
