/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <string.h>

#include "transport/port.h"

void sib_port_init(struct sib_port *port, uint8_t port_num, uint64_t port_guid)
{
	memset(port, 0, sizeof(*port));
	port->port_num = port_num;
	port->state = SIB_PORT_DOWN;
	port->port_guid = port_guid;
	/* IBA 4.1.1: the default GID is the link-local prefix fe80::/64 followed
	 * by the port GUID (EUI-64), both big-endian. */
	port->GID[0][0] = 0xfe;
	port->GID[0][1] = 0x80;
	for (int i = 0; i < 8; i++)
		port->GID[0][8 + i] = (uint8_t)(port_guid >> (56 - 8 * i));
	port->P_Key[0] = SIB_PKEY_DEFAULT;
	/* The link decides active_mtu from the interface MTU (next issue); on
	 * loopback that is 4096, which is what we report until then. */
	port->max_mtu = SIB_MTU_4096;
	port->active_mtu = SIB_MTU_4096;
}

bool sib_port_set_lid(struct sib_port *port, uint16_t lid, uint16_t sm_lid)
{
	bool was_active = port->state == SIB_PORT_ACTIVE;

	if (lid == 0 || lid > SIB_LID_UNICAST_MAX)
		return false;
	port->LID = lid;
	port->SMLID = sm_lid;
	port->state = SIB_PORT_ACTIVE;
	return !was_active;
}

uint16_t sib_port_local_lid(pid_t pid)
{
	unsigned long p = (unsigned long)(pid < 0 ? -(long)pid : pid);

	return (uint16_t)(p % SIB_LID_UNICAST_MAX + 1);
}

int sib_port_gid(const struct sib_port *port, unsigned index, uint8_t gid[16])
{
	if (index >= SIB_GID_TBL_LEN)
		return -1;
	memcpy(gid, port->GID[index], 16);
	return 0;
}

bool sib_port_gid_valid(const struct sib_port *port, unsigned index)
{
	static const uint8_t empty[16];

	return index < SIB_GID_TBL_LEN && memcmp(port->GID[index], empty, 16) != 0;
}

int sib_port_pkey(const struct sib_port *port, unsigned index, uint16_t *pkey)
{
	if (index >= SIB_MAX_PKEYS)
		return -1;
	*pkey = port->P_Key[index];
	return 0;
}

unsigned sib_mtu_bytes(enum sib_mtu mtu)
{
	if (mtu < SIB_MTU_256 || mtu > SIB_MTU_4096)
		return 0;
	return 128u << mtu;
}
