"""The catalog and its queries: record versions in memory, the search index, the watcher, lists, occurrences, who may read what, the representation."""
