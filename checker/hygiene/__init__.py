"""Repository hygiene of a tree: junk, names, big files and links, and the secret scan (a Hyperscan gate, a literal
pre-filter, detect-secrets).
"""
