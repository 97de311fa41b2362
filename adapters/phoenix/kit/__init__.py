"""phoenix's test kit: what the test suite needs of this vendor, kept with its adapter (not shipped in the wheel)."""
