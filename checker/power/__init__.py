"""Power logs: their reader, the reference power checker's verdict, and the power rules the logs can show."""
