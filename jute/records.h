#pragma once
// Every ZooKeeper client record in one include: handshake, headers, requests, responses, multi,
// plus the op codes, error codes and protocol constants they use.

#include "jute/connect.h"
#include "jute/constants.h"
#include "jute/data.h"
#include "jute/errors.h"
#include "jute/headers.h"
#include "jute/multi.h"
#include "jute/opcodes.h"
#include "jute/requests.h"
#include "jute/responses.h"
