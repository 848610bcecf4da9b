"""System descriptions: JSON read with lines and duplicate keys, validated per round, and held against the logs."""
