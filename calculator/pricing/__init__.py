"""What it costs: the turn, the bill for owned capacity, the comparison of the three ways to buy."""
