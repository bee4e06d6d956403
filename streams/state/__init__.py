"""What the join keeps per key, and what samples are built *as of*.

A plan's state (its latest snapshot, corrections, stages, intent and token charges:
:mod:`learnstream.streams.state.plan`, :mod:`learnstream.streams.state.facts`) and a MAP
session's (:mod:`learnstream.streams.state.session`). The join (streams/join/) folds records
into them; the sample builders (streams/samples/) read them. Both import this package, and
it imports neither: the two never need each other for a state's shape.
"""
