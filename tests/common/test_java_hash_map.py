"""java.util.HashMap's iteration order, where RocketMQ 4.9.3 lets it show (JDK 17 checked)."""

from mqlab.common.java_hash_map import hash_map_order, java_long_hash


def test_broker_properties_order_is_bucket_order():
    """TAGS (bucket 14) after CLUSTER (12) in a 16-slot table: a 4.9.3 broker stores
    CLUSTER first; UNIQ_KEY shares bucket 12 with CLUSTER and keeps insertion order."""
    assert hash_map_order(["TAGS", "CLUSTER"]) == ["CLUSTER", "TAGS"]
    assert hash_map_order(["TAGS", "UNIQ_KEY", "CLUSTER"]) == ["UNIQ_KEY", "CLUSTER", "TAGS"]
    assert hash_map_order(["TAGS", "CLUSTER", "UNIQ_KEY"]) == ["CLUSTER", "UNIQ_KEY", "TAGS"]


def test_long_keys_use_long_hash_code():
    """Long#hashCode is value ^ (value >>> 32): broker ids 1 and 16 in a 16-slot table land
    in buckets 1 and 0, so 16 comes first (getSystemTopicList's pick)."""
    assert java_long_hash(1) == 1 and java_long_hash(-1) == 0
    assert hash_map_order([1, 16], hash_code=java_long_hash) == [16, 1]


def test_java_properties_order_is_jdk17s():
    """JavaProperties iterates as a JDK 17 Properties (a ConcurrentHashMap) does.

    Both orders were printed by JDK 17 (``Properties#put`` in this order, then
    ``keySet()``). The first set grows the table at its 12th key (sizeCtl 12 = 0.75 × 16);
    a HashMap would only grow at the 13th, so ``hash_map_order`` gives another order.
    """
    from mqlab.common.java_hash_map import JavaProperties

    keys = ["kgbsg", "k189he", "k235wi", "kb46q", "k21sql", "k24tdn", "k1e6kx", "k1gw6e",
            "k1eskl", "k36fl", "kq7hq", "k34vh"]  # fmt: skip
    java = ["k24tdn", "kq7hq", "k34vh", "k189he", "kb46q", "k21sql", "k1eskl", "kgbsg",
            "k36fl", "k1e6kx", "k235wi", "k1gw6e"]  # fmt: skip
    p = JavaProperties()
    for k in keys:
        p.put(k, "v")
    assert p.keys() == java
    assert hash_map_order(keys) != java
    p = JavaProperties()
    for i in range(30):
        p.put(f"key{i}", "v")
    assert ",".join(p.keys()) == (
        "key1,key2,key0,key5,key6,key3,key4,key9,key7,key8,key22,key21,key20,key15,key14,"
        "key13,key12,key19,key18,key17,key16,key11,key10,key26,key25,key24,key23,key29,"
        "key28,key27"
    )
    p.put("key0", "w")  # a replaced value keeps its place
    assert p.keys()[2] == "key0" and p.get("key0") == "w" and len(p) == 30
