"""``cascade.similarity_span``: the similarity check as a filter in front of the in-house verifier."""
