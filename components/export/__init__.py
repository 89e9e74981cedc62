"""Results in other tools' formats: TREC runs and qrels, and regressions checked against published figures."""
