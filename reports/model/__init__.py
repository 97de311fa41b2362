"""The typed report model: what a report shows, built once from the analysis of a run
(:mod:`harness.reports.analysis`) as plain data, every section one
:class:`~harness.reports.model.blocks.Section` (:mod:`harness.reports.model.report` builds a run's report;
the ``*_section`` modules build each section; :mod:`harness.reports.model.compare_page` the compare page).

Nothing here lays anything out; :mod:`harness.reports.render` does, from finished models, and calls nothing here
but the types' own methods."""
