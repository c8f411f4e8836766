"""A protocol buffers wire reader for the integration checks that look into
profile.pb.gz without the schema (protoc --decode needs it; these read a few
fields by number)."""


def varint(buf, i):
    """The varint at buf[i]: (value, the index after it)."""
    v = s = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << s
        s += 7
        if b < 0x80:
            return v, i


def fields(buf):
    """(field number, value) of each field of the message buf: an int for
    varints, bytes for the others; an unknown wire type raises ValueError."""
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 2:
            n, i = varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield num, v
