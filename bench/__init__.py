"""Benchmarks: each ``bench_<topic>.py`` times exprgraph against an anchor, interleaved, best of N."""
