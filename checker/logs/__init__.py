"""Reading run logs: the input (plain, gzip, raw job output), the record reader with real line numbers, and the facts a
tree check needs.
"""
