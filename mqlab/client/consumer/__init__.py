"""mqlab.client.consumer: push and pull consumers, rebalance, pull service, offset stores.

Kept import-light on purpose: ``mqlab.client.mq_client_instance`` imports modules of this
package, so nothing here may import the client instance at package import time.
"""
