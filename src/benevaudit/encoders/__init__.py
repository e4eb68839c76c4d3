"""benevaudit.encoders: encoder and tokenizer loading, encoding with head-and-tail truncation,
and [CLS] embeddings, shared by the audit, the metrics, the analysis and the benchmarks.

It sits below ``metrics`` and ``audit`` so both can load the same classifier without importing
each other: it may import the core only.
"""
