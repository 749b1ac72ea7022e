"""Files in and out: judgment files by kind (``qrels``, ``queries``, ``corpus``, ``tags``,
``beir``), TREC runs (``trec``), and run files streamed into columns for ``evaluate``
(``runfiles``)."""
