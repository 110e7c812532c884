"""One module per rule. The registry (bcast_lint.codes.RULES) lists them; nothing here imports them."""
