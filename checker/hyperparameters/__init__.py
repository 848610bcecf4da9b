"""The closed-division hyperparameter table: the table as data, its constraint vocabulary, its application to a log,
and the advice on what keeps a run out of closed.
"""
