"""Fault-injection helpers shared by the reliability tests (no network, no real sleeping)."""
