"""What the model sees of the conversation: the context window and its
budget (:mod:`window`, :mod:`tokens`), compaction and relief when it
overflows (:mod:`context`, :mod:`relief`), the messages as a provider's
wire format (:mod:`wire`) and transcripts (:mod:`transcripts`)."""
