"""Text as editors load it: the UTF-8 byte order mark they keep out of it."""

_BOM = b"\xef\xbb\xbf"
