// Git's pack delta format, applied (see pack-reader.ts). Pure code.

/** The size of the object a delta makes, from the delta's first bytes (its base size, then that size); throws when they are cut short. */
export function deltaResultSize(prefix: Buffer): number {
  let at = 0;
  const size = (): number => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      if (at >= prefix.length) throw new Error('the delta header is cut short');
      const byte = prefix[at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if (!(byte & 0x80)) return value;
    }
  };
  size();
  return size();
}

/** The object a delta makes of `base`: the base size, the result size, then copy-from-base and insert instructions. */
export function applyDelta(delta: Buffer, base: Buffer): Buffer {
  let at = 0;
  const size = (): number => {
    let value = 0;
    let byte: number;
    let shift = 0;
    do {
      byte = delta[at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  };
  if (size() !== base.length) throw new Error('delta base has the wrong size');
  const out = Buffer.allocUnsafe(size());
  let written = 0;
  while (at < delta.length) {
    const op = delta[at++]!;
    if (op & 0x80) {
      let offset = 0;
      let length = 0;
      if (op & 0x01) offset += delta[at++]!;
      if (op & 0x02) offset += delta[at++]! * 0x100;
      if (op & 0x04) offset += delta[at++]! * 0x10000;
      if (op & 0x08) offset += delta[at++]! * 0x1000000;
      if (op & 0x10) length += delta[at++]!;
      if (op & 0x20) length += delta[at++]! * 0x100;
      if (op & 0x40) length += delta[at++]! * 0x10000;
      if (length === 0) length = 0x10000;
      if (offset + length > base.length || written + length > out.length) throw new Error('delta copies out of range');
      if (length < 128) for (let i = 0; i < length; i++) out[written + i] = base[offset + i]!; // Buffer.copy costs more
      else base.copy(out, written, offset, offset + length);
      written += length;
    } else if (op) {
      if (at + op > delta.length || written + op > out.length) throw new Error('delta inserts out of range');
      for (let i = 0; i < op; i++) out[written + i] = delta[at + i]!;
      at += op;
      written += op;
    } else {
      throw new Error('delta has a reserved instruction');
    }
  }
  if (written !== out.length) throw new Error('delta result has the wrong size');
  return out;
}
