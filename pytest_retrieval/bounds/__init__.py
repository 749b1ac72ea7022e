"""Every request to something the plugin does not control is bounded in time and size (issue
#32, section 3): ``limits.py`` (the deadline of one attempt, the size cap of an answer counted
after decompression), ``urllib3_pool.py`` (the ``http`` backend's client) and
``httpx_transport.py`` (the LLM judges' and the Cohere reranker's SDK clients)."""
