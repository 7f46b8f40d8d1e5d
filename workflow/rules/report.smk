# Report: the cross-paper summary and the benchmark collection.


def report_targets():
    return []
