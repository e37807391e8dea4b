"""Cost over hours and months: load profiles, the hybrid plan, growth."""
