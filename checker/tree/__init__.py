"""Organisation trees: the default profile's tree check, the reference package checker's own verdict, and the seed
rules.
"""
