"""The NLI check in MiniCheck's form: ``nli.minicheck`` (module ``minicheck``)."""
