"""The review period: hyperparameter borrowing (borrow), Preview results against Available ones (preview) and a
tree against the same organisation's tree of the previous round (since). Each reads entries with the checker's own
readers (logs/, systems/, rounds/) and says what it found as REV findings plus tables for the HTML page."""
