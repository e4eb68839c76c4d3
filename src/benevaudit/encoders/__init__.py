"""Encoder and tokenizer loading, shared by the audit, the metrics and the benchmarks.

It sits below ``metrics`` and ``audit`` so both can load the same classifier without importing
each other.
"""
