"""Files in and out: queries, qrels, corpus, tags and TREC runs (``judgments``), run files streamed
into columns for ``evaluate`` (``runfiles``)."""
