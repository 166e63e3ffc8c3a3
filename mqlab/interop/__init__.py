"""Real RocketMQ clients against mqlab and against a real RocketMQ 4.9.3 broker, side by side.

``python -m mqlab interop`` runs a matrix of *scenarios* (one client doing one thing: a Go
producer sending SEND_MESSAGE, a Java push consumer with a tag filter, ``mqadmin
topicRoute`` ...) against two *targets*: ``mqlab serve`` and the real 4.9.3 name server and
broker (``mqlab.conformance.real_cluster``). Each scenario checks its own expectations on
each target and returns an *observation*: what a user can see (which messages were
delivered, to which consumer, in which per-queue order, with which statuses), with ports,
times and ids left out. A scenario passes on a target when its checks hold there; the two
targets match when the observations are equal.

Modules: ``targets`` (the two clusters), ``go_client`` (the Go client program under
``interop/go``), ``scenarios`` (the catalogue), ``matrix`` (the runner and its table).
"""
