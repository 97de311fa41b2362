"""The similarity shortcut: ``baseline.similarity`` (module ``similarity``), and its shared core
(``_sim``: sentence splitting, the embeddings call through the gateway, cosine similarity), which
``cascade.similarity_span`` reuses."""
