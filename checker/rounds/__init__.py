"""What a round is: its benchmarks (run counts, RCPs, units), the division a result counts in, and the round a path
states.
"""
