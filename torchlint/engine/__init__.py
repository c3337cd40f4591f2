"""Discovers files, reads and parses each once, runs the enabled rules in one traversal."""
