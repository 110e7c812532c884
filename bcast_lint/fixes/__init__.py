"""Fix builders shared by several rules."""
