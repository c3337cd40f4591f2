"""Turns fixes into new text: order edits, defer overlaps, re-lint until stable, re-parse."""
