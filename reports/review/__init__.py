"""``harness review``: a local web app for labelling answers claim by claim (:mod:`.server`, the page
under ``static/``), the seeded sample it labels (:mod:`.sampling`, :mod:`.source`), the labels file
(:mod:`.store`), the labels as annotated cases (:mod:`.answers`, :mod:`.labelled`), agreement between
reviewers (:mod:`.reviewers`) and of the metrics with the labels (:mod:`.agree`)."""
