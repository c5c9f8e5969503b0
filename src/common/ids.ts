/** Our ids are UUIDs: anything else names nothing (and is never sent to the database as a uuid). */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
