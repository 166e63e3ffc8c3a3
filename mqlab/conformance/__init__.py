"""Conformance: the real Apache RocketMQ 4.9.3 broker and name server as mqlab's oracle.

``real_cluster`` builds and runs the real cluster (from Maven Central) and ``mqadmin``;
``wire`` is a minimal raw remoting client for sending one hand-made request to either side.
"""
