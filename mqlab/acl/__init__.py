"""mqlab.acl: 4.9.3's plain ACL (the ``acl`` module): who may send, and the client's signature."""
