"""Facts about a file that rules share, each computed once per file and only when asked."""
