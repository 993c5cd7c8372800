/*-------------------------------------------------------------------------
 *
 * nvm_redoenc.c
 *	  The compact encoding of the versions of a COMMIT record: the
 *	  primary's encoder and the replay's decoder.  The format is
 *	  nvm_redofmt.h's ("XLOG_NVM_COMMIT"); what a version costs is a flags
 *	  byte, the numbers that differ from what the previous version of the
 *	  record implies, and its row without the parts of the tuple header that
 *	  every stored image has alike.
 *
 * The encoder runs in the commit hook, which must not fail: its buffer is
 * malloc'd, and running out of memory is a PANIC, as for the rest of the
 * record.  The decoder checks every length against the end of the record
 * and reports a record that does not hold what it says as damaged.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "storage/itemptr.h"
#include "utils/memutils.h"

#include "redo/nvm_redoenc.h"
#include "redo/nvm_redofmt.h"

/* Where the fields of a stored image's tuple header are. */
#define HDR_XMIN	offsetof(HeapTupleHeaderData, t_choice.t_heap.t_xmin)
#define HDR_XMAX	offsetof(HeapTupleHeaderData, t_choice.t_heap.t_xmax)
#define HDR_CID		offsetof(HeapTupleHeaderData, t_choice.t_heap.t_field3.t_cid)
#define HDR_CTID	offsetof(HeapTupleHeaderData, t_ctid)
#define HDR_MASKS	offsetof(HeapTupleHeaderData, t_infomask2)
#define HDR_LEN		SizeofHeapTupleHeader

StaticAssertDecl(HDR_MASKS + 5 == HDR_LEN,
				 "t_infomask2, t_infomask and t_hoff end the tuple header");

/* grow makes room for need more bytes, or stops the server (see the header). */
static void
grow(NvmRedoEncoder *e, size_t need)
{
	size_t		n = e->cap ? e->cap : 1024;
	char	   *p;

	if (e->len + need <= e->cap)
		return;
	while (n < e->len + need)
		n *= 2;
	p = realloc(e->buf, n);
	if (p == NULL)
		elog(PANIC, "out of memory while writing the nvm redo of a commit");
	e->buf = p;
	e->cap = n;
}

static void
put_byte(NvmRedoEncoder *e, uint8 b)
{
	e->buf[e->len++] = (char) b;
}

static void
put_bytes(NvmRedoEncoder *e, const void *p, size_t n)
{
	memcpy(e->buf + e->len, p, n);
	e->len += n;
}

/* put_varint writes v in 7-bit groups, least significant first (LEB128). */
static void
put_varint(NvmRedoEncoder *e, uint64 v)
{
	while (v >= 0x80)
	{
		put_byte(e, (uint8) (v | 0x80));
		v >>= 7;
	}
	put_byte(e, (uint8) v);
}

/* put_delta writes the signed difference d, zigzag-coded (0, -1, 1, -2, ...). */
static void
put_delta(NvmRedoEncoder *e, uint64 to, uint64 from)
{
	int64		d = (int64) (to - from);

	put_varint(e, ((uint64) d << 1) ^ (uint64) (d >> 63));
}

/*
 * compactable says whether image (len bytes) is a tuple image whose header
 * the replay can rebuild from xmin, cid, the masks and t_hoff: xmax
 * invalid and t_ctid invalid, as every stored image has them
 * (../row/nvm_tuple.c, nvm_form_tuple).
 */
static bool
compactable(const char *image, uint32 len)
{
	ItemPointerData invalid;
	TransactionId xmax;

	if (len < HDR_LEN)
		return false;
	ItemPointerSetInvalid(&invalid);
	memcpy(&xmax, image + HDR_XMAX, sizeof(xmax));
	return xmax == InvalidTransactionId &&
		memcmp(image + HDR_CTID, &invalid, sizeof(ItemPointerData)) == 0;
}

/* varint_len is the number of bytes put_varint writes for v. */
static size_t
varint_len(uint64 v)
{
	size_t		n = 1;

	while (v >= 0x80)
	{
		v >>= 7;
		n++;
	}
	return n;
}

/*
 * try_diff writes the body of a row (the image after its tuple header,
 * blen bytes) as a diff against pred's body, if that is smaller than the
 * body: the delta of pred's version number to version_no, the lengths of
 * the common prefix and suffix, the length of the bytes between them and
 * those bytes, as heap's XLOG_HEAP_PREFIX_FROM_OLD and SUFFIX_FROM_OLD do.
 * Returns whether it did.
 */
static bool
try_diff(NvmRedoEncoder *e, const char *body, uint32 blen, const NvmVersion *pred,
		 uint64 version_no)
{
	const char *pbody;
	uint32		plen;
	uint32		most;
	uint32		prefix = 0;
	uint32		suffix = 0;
	uint32		mid;
	uint64		zz;
	int64		d;

	if (!compactable(pred->data, pred->data_len))
		return false;
	pbody = pred->data + HDR_LEN;
	plen = pred->data_len - HDR_LEN;
	most = Min(blen, plen);
	while (prefix < most && body[prefix] == pbody[prefix])
		prefix++;
	while (suffix < most - prefix && body[blen - 1 - suffix] == pbody[plen - 1 - suffix])
		suffix++;
	mid = blen - prefix - suffix;
	d = (int64) (pred->version_no - version_no);
	zz = ((uint64) d << 1) ^ (uint64) (d >> 63);
	if (varint_len(zz) + varint_len(prefix) + varint_len(suffix) + varint_len(mid) + mid >=
		varint_len(blen) + blen)
		return false;
	put_varint(e, zz);
	put_varint(e, prefix);
	put_varint(e, suffix);
	put_varint(e, mid);
	put_bytes(e, body + prefix, mid);
	return true;
}

/*
 * nvm_redoenc_head writes into h (emptied first) the header of a COMMIT
 * record and its ntables table references, in the format of
 * nvm_redofmt.h.
 */
void
nvm_redoenc_head(NvmRedoEncoder *h, const xl_nvm_commit *hdr, const xl_nvm_table_ref *refs)
{
	h->len = 0;
	grow(h, 32 + (size_t) hdr->ntables * 60);
	put_byte(h, hdr->flags);
	put_bytes(h, &hdr->txid, sizeof(hdr->txid));
	put_bytes(h, &hdr->time, sizeof(hdr->time));
	put_varint(h, hdr->xid);
	put_varint(h, hdr->nversions);
	put_varint(h, hdr->ntables);
	for (int i = 0; i < hdr->ntables; i++)
	{
		put_varint(h, refs[i].key.spc);
		put_varint(h, refs[i].key.db);
		put_varint(h, refs[i].key.rel);
		put_varint(h, refs[i].key.pad);
		put_varint(h, refs[i].next_record);
		put_varint(h, refs[i].next_version);
	}
}

/* nvm_redoenc_reset starts a new record in e (its buffer is kept). */
void
nvm_redoenc_reset(NvmRedoEncoder *e)
{
	e->len = 0;
	memset(&e->prev, 0, sizeof(e->prev));
}

/*
 * nvm_redoenc_add adds version v of table reference table to the record
 * (the format: nvm_redofmt.h).  pred is the version v replaces, if the
 * replay is certain to hold it (see nvm_redo.c, add_version), else NULL.
 */
void
nvm_redoenc_add(NvmRedoEncoder *e, uint16 table, const NvmVersion *v, const NvmVersion *pred)
{
	uint64		kind = atomic_load(&((NvmVersion *) v)->info) &
		(NVM_VINFO_TOMBSTONE | NVM_VINFO_MOVED | NVM_VINFO_INSERTED);
	bool		tomb = (kind & NVM_VINFO_TOMBSTONE) != 0;
	uint32		len = tomb ? 0 : v->data_len;
	size_t		flags_at;
	uint8		flags;

	grow(e, NVM_REDOENC_MAX_OVERHEAD + len);
	flags_at = e->len;
	put_byte(e, 0);
	flags = (uint8) (kind >> 2) & XLNVM_V_KIND_MASK;

	if (table == e->prev.table)
		flags |= XLNVM_V_TABLE_SAME;
	else
		put_varint(e, table);
	if (v->record_no == e->prev.record_no + 1)
		flags |= XLNVM_V_RECORD_NEXT;
	else
		put_delta(e, v->record_no, e->prev.record_no);
	if (v->version_no == e->prev.version_no + 1)
		flags |= XLNVM_V_VERSION_NEXT;
	else
		put_delta(e, v->version_no, e->prev.version_no);
	if (v->index_root == v->record_no)
		flags |= XLNVM_V_ROOT_RECORD;
	else
		put_delta(e, v->index_root, v->record_no);
	e->prev.table = table;
	e->prev.record_no = v->record_no;
	e->prev.version_no = v->version_no;

	if (!compactable(v->data, len))
	{
		put_varint(e, len);
		put_bytes(e, v->data, len);
	}
	else
	{
		uint8		iflags = 0;
		size_t		iflags_at = e->len;
		uint32		xmin;
		uint32		cid;

		flags |= XLNVM_V_TUPLE;
		put_byte(e, 0);
		memcpy(&xmin, v->data + HDR_XMIN, sizeof(xmin));
		memcpy(&cid, v->data + HDR_CID, sizeof(cid));
		if (e->prev.have_tuple && xmin == e->prev.xmin)
			iflags |= XLNVM_T_XMIN_SAME;
		else
			put_bytes(e, &xmin, sizeof(xmin));
		if (e->prev.have_tuple && cid == e->prev.cid)
			iflags |= XLNVM_T_CID_SAME;
		else
			put_varint(e, cid);
		if (e->prev.have_tuple && memcmp(v->data + HDR_MASKS, e->prev.masks, 5) == 0)
			iflags |= XLNVM_T_MASKS_SAME;
		else
			put_bytes(e, v->data + HDR_MASKS, 5);
		e->prev.have_tuple = true;
		e->prev.xmin = xmin;
		e->prev.cid = cid;
		memcpy(e->prev.masks, v->data + HDR_MASKS, 5);

		if (pred != NULL && try_diff(e, v->data + HDR_LEN, len - HDR_LEN, pred, v->version_no))
			iflags |= XLNVM_T_DIFF;
		else
		{
			put_varint(e, len - HDR_LEN);
			put_bytes(e, v->data + HDR_LEN, len - HDR_LEN);
		}
		e->buf[iflags_at] = (char) iflags;
	}
	e->buf[flags_at] = (char) flags;
}

/* damaged reports a record that does not hold what it says (a PANIC). */
static void
damaged(const NvmRedoDecoder *d)
{
	elog(PANIC, "nvm redo record at %X/%X is damaged", LSN_FORMAT_ARGS(d->where));
}

static uint8
get_byte(NvmRedoDecoder *d)
{
	if (d->p >= d->end)
		damaged(d);
	return (uint8) *d->p++;
}

static const char *
get_bytes(NvmRedoDecoder *d, uint64 n)
{
	const char *p = d->p;

	if (n > (uint64) (d->end - d->p))
		damaged(d);
	d->p += n;
	return p;
}

static uint64
get_varint(NvmRedoDecoder *d)
{
	uint64		v = 0;

	for (int shift = 0; shift < 64; shift += 7)
	{
		uint8		b = get_byte(d);

		v |= (uint64) (b & 0x7F) << shift;
		if ((b & 0x80) == 0)
			return v;
	}
	damaged(d);
	return 0;
}

static uint64
get_delta(NvmRedoDecoder *d, uint64 from)
{
	uint64		z = get_varint(d);
	int64		delta = (int64) (z >> 1) ^ -(int64) (z & 1);

	return from + (uint64) delta;
}

static uint32
get_len(NvmRedoDecoder *d)
{
	uint64		n = get_varint(d);

	if (n > MaxAllocSize)
		damaged(d);
	return (uint32) n;
}

static uint32
get_u32(NvmRedoDecoder *d)
{
	uint64		v = get_varint(d);

	if (v > PG_UINT32_MAX)
		damaged(d);
	return (uint32) v;
}

/*
 * nvm_redodec_begin starts decoding the COMMIT record at p..end, from the
 * WAL at where (invalid for a checkpoint's in-doubt file), and reads its
 * header into hdr; nvm_redodec_ref reads its table references next, then
 * nvm_redodec_next its versions.
 */
void
nvm_redodec_begin(NvmRedoDecoder *d, XLogRecPtr where, const char *p, const char *end,
				  xl_nvm_commit *hdr)
{
	uint32		ntables;

	memset(d, 0, sizeof(*d));
	d->where = where;
	d->p = p;
	d->end = end;
	memset(hdr, 0, sizeof(*hdr));
	hdr->flags = get_byte(d);
	memcpy(&hdr->txid, get_bytes(d, sizeof(hdr->txid)), sizeof(hdr->txid));
	memcpy(&hdr->time, get_bytes(d, sizeof(hdr->time)), sizeof(hdr->time));
	hdr->xid = get_u32(d);
	hdr->nversions = get_u32(d);
	ntables = get_u32(d);
	if (ntables > PG_UINT16_MAX)
		damaged(d);
	hdr->ntables = (uint16) ntables;
	d->ntables = hdr->ntables;
	initStringInfo(&d->img);
}

/* nvm_redodec_ref reads the next table reference of the record into ref. */
void
nvm_redodec_ref(NvmRedoDecoder *d, xl_nvm_table_ref *ref)
{
	memset(ref, 0, sizeof(*ref));
	ref->key.spc = get_u32(d);
	ref->key.db = get_u32(d);
	ref->key.rel = get_u32(d);
	ref->key.pad = get_u32(d);
	ref->next_record = get_varint(d);
	ref->next_version = get_varint(d);
}

/* nvm_redodec_end frees what the decoder allocated. */
void
nvm_redodec_end(NvmRedoDecoder *d)
{
	pfree(d->img.data);
	d->img.data = NULL;
}

/*
 * nvm_redodec_next decodes the next version into out: its numbers, its
 * kind, its table reference and its image (out->rv.data, valid until the
 * next call), or, for a diff, what nvm_redodec_apply_diff needs.
 */
void
nvm_redodec_next(NvmRedoDecoder *d, NvmRedoVersion *out)
{
	uint8		flags = get_byte(d);

	memset(out, 0, sizeof(*out));
	out->rv.kind = (uint64) (flags & XLNVM_V_KIND_MASK) << 2;
	if (flags & XLNVM_V_TABLE_SAME)
		out->table = d->prev.table;
	else
	{
		uint64		t = get_varint(d);

		if (t >= d->ntables)
			damaged(d);
		out->table = (uint16) t;
	}
	if (out->table >= d->ntables)
		damaged(d);
	out->rv.record_no = (flags & XLNVM_V_RECORD_NEXT) ? d->prev.record_no + 1 :
		get_delta(d, d->prev.record_no);
	out->rv.version_no = (flags & XLNVM_V_VERSION_NEXT) ? d->prev.version_no + 1 :
		get_delta(d, d->prev.version_no);
	out->rv.index_root = (flags & XLNVM_V_ROOT_RECORD) ? out->rv.record_no :
		get_delta(d, out->rv.record_no);
	d->prev.table = out->table;
	d->prev.record_no = out->rv.record_no;
	d->prev.version_no = out->rv.version_no;

	resetStringInfo(&d->img);
	if ((flags & XLNVM_V_TUPLE) == 0)
	{
		uint32		len = get_len(d);

		out->rv.data = get_bytes(d, len);
		out->rv.len = len;
	}
	else
	{
		uint8		iflags = get_byte(d);
		char		hdr[HDR_LEN];
		TransactionId xmax = InvalidTransactionId;
		ItemPointerData invalid;
		uint32		len;

		if (iflags & ~XLNVM_T_ALL)
			damaged(d);
		if ((iflags & (XLNVM_T_XMIN_SAME | XLNVM_T_CID_SAME | XLNVM_T_MASKS_SAME)) &&
			!d->prev.have_tuple)
			damaged(d);
		if ((iflags & XLNVM_T_XMIN_SAME) == 0)
			memcpy(&d->prev.xmin, get_bytes(d, sizeof(uint32)), sizeof(uint32));
		if ((iflags & XLNVM_T_CID_SAME) == 0)
		{
			uint64		cid = get_varint(d);

			if (cid > PG_UINT32_MAX)
				damaged(d);
			d->prev.cid = (uint32) cid;
		}
		if ((iflags & XLNVM_T_MASKS_SAME) == 0)
			memcpy(d->prev.masks, get_bytes(d, 5), 5);
		d->prev.have_tuple = true;

		/* the header as nvm_form_tuple stored it (xmax and t_ctid invalid) */
		ItemPointerSetInvalid(&invalid);
		memcpy(hdr + HDR_XMIN, &d->prev.xmin, sizeof(uint32));
		memcpy(hdr + HDR_XMAX, &xmax, sizeof(xmax));
		memcpy(hdr + HDR_CID, &d->prev.cid, sizeof(uint32));
		memcpy(hdr + HDR_CTID, &invalid, sizeof(invalid));
		memcpy(hdr + HDR_MASKS, d->prev.masks, 5);
		appendBinaryStringInfo(&d->img, hdr, HDR_LEN);

		if (iflags & XLNVM_T_DIFF)
		{
			out->diff = true;
			out->pred_version_no = get_delta(d, out->rv.version_no);
			out->prefix = get_len(d);
			out->suffix = get_len(d);
			out->mid_len = get_len(d);
			out->mid = get_bytes(d, out->mid_len);
			return;
		}
		len = get_len(d);
		appendBinaryStringInfo(&d->img, get_bytes(d, len), len);
		out->rv.data = d->img.data;
		out->rv.len = (uint32) d->img.len;
	}
}

/*
 * nvm_redodec_apply_diff makes the image of a version logged as a diff
 * (out->diff) from pred, the image (pred_len bytes) of the version it was
 * logged against, which the replaying side holds: the header decoded,
 * then the prefix of pred's body, the new bytes, the suffix of pred's
 * body.  Returns false if pred cannot be that version (too short for the
 * lengths the diff names).
 */
bool
nvm_redodec_apply_diff(NvmRedoDecoder *d, NvmRedoVersion *out, const char *pred, uint32 pred_len)
{
	const char *pbody;
	uint32		plen;

	Assert(out->diff && d->img.len == HDR_LEN);
	if (!compactable(pred, pred_len))
		return false;
	pbody = pred + HDR_LEN;
	plen = pred_len - HDR_LEN;
	if ((uint64) out->prefix + out->suffix > plen)
		return false;
	appendBinaryStringInfo(&d->img, pbody, out->prefix);
	appendBinaryStringInfo(&d->img, out->mid, out->mid_len);
	appendBinaryStringInfo(&d->img, pbody + plen - out->suffix, out->suffix);
	out->rv.data = d->img.data;
	out->rv.len = (uint32) d->img.len;
	return true;
}
