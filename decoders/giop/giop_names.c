/* SPDX-License-Identifier: BSD-2-Clause */
/* Names of GIOP values, as the pairs CSV (docs/output.md) and the CORBA specification spell them. */
#include "giop.h"

static const char *const type_names[GIOP_TYPE_COUNT] = {
	"Request", "Reply", "CancelRequest", "LocateRequest",
	"LocateReply", "CloseConnection", "MessageError", "Fragment",
};

static const char *const reply_status[] = {
	"NO_EXCEPTION", "USER_EXCEPTION", "SYSTEM_EXCEPTION",
	"LOCATION_FORWARD", "LOCATION_FORWARD_PERM", "NEEDS_ADDRESSING_MODE",
};

static const char *const locate_status[] = {
	"UNKNOWN_OBJECT", "OBJECT_HERE", "OBJECT_FORWARD",
	"OBJECT_FORWARD_PERM", "LOC_SYSTEM_EXCEPTION", "LOC_NEEDS_ADDRESSING_MODE",
};

static const char *const error_names[GIOP_ERR_COUNT] = {
	"none", "bad magic", "unsupported GIOP version", "bad message type",
	"reserved flags set", "message size too large", "field runs past the message size",
	"unknown TargetAddress disposition", "bad string",
};

const char *giop_type_name(unsigned type)
{
	return type < GIOP_TYPE_COUNT ? type_names[type] : "Unknown";
}

const char *giop_reply_status_name(uint32_t s)
{
	return s < sizeof reply_status / sizeof *reply_status ? reply_status[s] : NULL;
}

const char *giop_locate_status_name(uint32_t s)
{
	return s < sizeof locate_status / sizeof *locate_status ? locate_status[s] : NULL;
}

const char *giop_error_name(enum giop_error e)
{
	return (unsigned)e < GIOP_ERR_COUNT ? error_names[e] : "?";
}

const char *giop_service_context_name(uint32_t id)
{
	switch (id) {
	case 0: return "TransactionService";
	case 1: return "CodeSets";
	case 2: return "ChainBypassCheck";
	case 3: return "ChainBypassInfo";
	case 4: return "LogicalThreadId";
	case 5: return "BI_DIR_IIOP";
	case 6: return "SendingContextRunTime";
	case 7: return "INVOCATION_POLICIES";
	case 8: return "FORWARDED_IDENTITY";
	case 9: return "UnknownExceptionInfo";
	case 10: return "RTCorbaPriority";
	case 11: return "RTCorbaPriorityRange";
	case 12: return "FT_GROUP_VERSION";
	case 13: return "FT_REQUEST";
	case 14: return "ExceptionDetailMessage";
	case 15: return "SecurityAttributeService";
	case 16: return "ActivityService";
	case 17: return "RMICustomMaxStreamFormat";
	case 18: return "ACCESS_SESSION_ID";
	case 19: return "SERVICE_SESSION_ID";
	case 20: return "FIREWALL_PATH";
	case 21: return "FIREWALL_PATH_RESP";
	}
	return NULL;
}

/* "IDL:omg.org/CORBA/OBJECT_NOT_EXIST:1.0" -> "OBJECT_NOT_EXIST" (into buf). */
const char *giop_system_exception_short(struct gs_span id, char *buf, size_t buflen)
{
	size_t start = 0, end = id.len, i;
	if (id.p == NULL || buflen == 0)
		return NULL;
	for (i = 0; i < id.len; i++)
		if (id.p[i] == '/')
			start = i + 1;
	for (i = start; i < id.len; i++)
		if (id.p[i] == ':') {
			end = i;
			break;
		}
	if (end <= start)
		return NULL;
	if (end - start >= buflen)
		end = start + buflen - 1;
	for (i = start; i < end; i++) {
		uint8_t ch = id.p[i];
		buf[i - start] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
	}
	buf[end - start] = '\0';
	return buf;
}
